@NullMarked
package dev.parapet.proxy.metrics;

import org.jspecify.annotations.NullMarked;
