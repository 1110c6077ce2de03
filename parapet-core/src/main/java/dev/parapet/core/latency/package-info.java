/**
 * Rolling latency quantiles per origin: bounded memory, old samples age out, allocation-free
 * recording. Feeds the hedging delay (p95) and relative slow-call thresholds ({@code 3x p95}).
 */
@NullMarked
package dev.parapet.core.latency;

import org.jspecify.annotations.NullMarked;
