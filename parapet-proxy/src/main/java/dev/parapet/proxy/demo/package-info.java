/**
 * {@code parapet demo}: two fault-injecting origins, a shield and an edge tier and an open-loop
 * load generator in one JVM, playing an origin's bad afternoon twice (breakers in shadow mode, then
 * enforcing) and printing the difference side by side. See docs/demo.md.
 */
@NullMarked
package dev.parapet.proxy.demo;

import org.jspecify.annotations.NullMarked;
