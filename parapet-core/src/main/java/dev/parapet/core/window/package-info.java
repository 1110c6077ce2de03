@NullMarked
package dev.parapet.core.window;

import org.jspecify.annotations.NullMarked;
