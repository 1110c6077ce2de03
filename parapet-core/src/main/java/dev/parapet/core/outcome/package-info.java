@NullMarked
package dev.parapet.core.outcome;

import org.jspecify.annotations.NullMarked;
