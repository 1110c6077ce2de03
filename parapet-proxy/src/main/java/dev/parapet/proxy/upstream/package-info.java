@NullMarked
package dev.parapet.proxy.upstream;

import org.jspecify.annotations.NullMarked;
