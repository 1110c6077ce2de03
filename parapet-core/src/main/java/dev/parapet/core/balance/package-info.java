/** Load balancers over immutable host snapshots: smooth WRR, least request, ring hash, ip hash. */
@NullMarked
package dev.parapet.core.balance;

import org.jspecify.annotations.NullMarked;
