/**
 * The proxy's configuration: an immutable model (records) of DESIGN.md's YAML, the human value
 * forms it is written in ({@link dev.parapet.proxy.config.HumanDuration}, {@link
 * dev.parapet.proxy.config.Percent}, {@link dev.parapet.proxy.config.DataSize}, {@link
 * dev.parapet.proxy.config.HostPort}, {@link dev.parapet.proxy.config.Cidr}) and {@link
 * dev.parapet.proxy.config.ConfigLoader}, which reads a file and reports every mistake at once,
 * each with its YAML path.
 */
@NullMarked
package dev.parapet.proxy.config;

import org.jspecify.annotations.NullMarked;
