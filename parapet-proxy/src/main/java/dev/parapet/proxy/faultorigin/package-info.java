/**
 * The fault-injecting origin behind {@code parapet origin}: a Netty HTTP/1.1 server whose answers
 * (status, body, latency, errors, resets, hangs, refusals, garbage) follow an immutable {@link
 * dev.parapet.proxy.faultorigin.FaultPlan} that a small control endpoint swaps at run time.
 */
@NullMarked
package dev.parapet.proxy.faultorigin;

import org.jspecify.annotations.NullMarked;
