@NullMarked
package dev.parapet.proxy.route;

import org.jspecify.annotations.NullMarked;
