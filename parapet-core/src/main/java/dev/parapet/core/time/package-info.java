@NullMarked
package dev.parapet.core.time;

import org.jspecify.annotations.NullMarked;
