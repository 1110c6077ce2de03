@NullMarked
package dev.parapet.core.breaker;

import org.jspecify.annotations.NullMarked;
