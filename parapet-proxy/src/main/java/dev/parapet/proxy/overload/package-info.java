/** The proxy's overload monitor: JVM and event-loop readings into the core overload policy. */
@NullMarked
package dev.parapet.proxy.overload;

import org.jspecify.annotations.NullMarked;
