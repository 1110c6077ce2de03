@NullMarked
package dev.parapet.proxy.runtime;

import org.jspecify.annotations.NullMarked;
