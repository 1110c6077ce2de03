/**
 * Request deadlines: remaining-budget arithmetic on monotonic nanos, the {@code Parapet-Deadline}
 * header between tiers, and the per-attempt timeout / fail-fast decision.
 */
@NullMarked
package dev.parapet.core.deadline;

import org.jspecify.annotations.NullMarked;
