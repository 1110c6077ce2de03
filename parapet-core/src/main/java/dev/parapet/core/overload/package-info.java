/** Overload policy (heap, CPU, event-loop lag to actions with hysteresis) and JVM samplers. */
@NullMarked
package dev.parapet.core.overload;

import org.jspecify.annotations.NullMarked;
