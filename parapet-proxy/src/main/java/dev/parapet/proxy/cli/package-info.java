@NullMarked
package dev.parapet.proxy.cli;

import org.jspecify.annotations.NullMarked;
