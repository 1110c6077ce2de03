/**
 * Deterministic discrete-event simulation of a CDN fleet (PoPs × servers → shields → origins) in
 * virtual time, running the real parapet-core policies.
 */
@NullMarked
package dev.parapet.sim;

import org.jspecify.annotations.NullMarked;
