/** Outlier detection per origin pool: passive ejection of failing hosts (Envoy semantics). */
@NullMarked
package dev.parapet.core.outlier;

import org.jspecify.annotations.NullMarked;
