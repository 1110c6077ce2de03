package dev.parapet.core.outlier;

/**
 * Receives ejections, skipped ejections and returns. Called by the thread that caused the change,
 * while the detector holds its lock, so events arrive in order: keep it short and never block.
 */
@FunctionalInterface
public interface OutlierListener {
  OutlierListener NONE = event -> {};

  void onEvent(OutlierEvent event);
}
