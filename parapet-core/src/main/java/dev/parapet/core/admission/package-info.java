/**
 * Admission control in front of origin-bound work: a {@link
 * dev.parapet.core.admission.AdmissionController} combines a concurrency gate with a short priority
 * queue, CoDel sojourn-time dropping and the shed order background, stale-while-revalidate refresh,
 * low priority, ordinary traffic. It never blocks its caller.
 */
@NullMarked
package dev.parapet.core.admission;

import org.jspecify.annotations.NullMarked;
