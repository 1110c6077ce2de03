@NullMarked
package dev.parapet.proxy.admin;

import org.jspecify.annotations.NullMarked;
