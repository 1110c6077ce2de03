/**
 * A fleet-wide ceiling on the attempts sent to one origin: a token bucket shared by every proxy of
 * a fleet ({@link dev.parapet.core.fleet.LeaseSource}, one Redis key in the proxy), handed out in
 * leases of several tokens so a request never waits for it, and a local share of the ceiling when
 * the shared bucket is slow or gone ({@link dev.parapet.core.fleet.FleetLimiter}).
 */
@NullMarked
package dev.parapet.core.fleet;

import org.jspecify.annotations.NullMarked;
