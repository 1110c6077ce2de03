@NullMarked
package dev.parapet.core.event;

import org.jspecify.annotations.NullMarked;
