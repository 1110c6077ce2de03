@NullMarked
package dev.parapet.proxy.server;

import org.jspecify.annotations.NullMarked;
