package dev.parapet.core.overload;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The JVM samplers report ratios in [0, 1] (or NaN where the platform has no figure). */
class JvmSamplersTest {

  @Test
  void heapAfterGcIsARatio() {
    System.gc(); // a collection makes the after-GC usage available; not a timing assertion
    double heap = new HeapAfterGcSampler().sample();
    assertThat(Double.isNaN(heap) || (heap >= 0.0 && heap <= 1.0)).as("heap %s", heap).isTrue();
  }

  @Test
  void processCpuIsARatio() {
    double cpu = new ProcessCpuSampler().sample();
    assertThat(Double.isNaN(cpu) || (cpu >= 0.0 && cpu <= 1.0)).as("cpu %s", cpu).isTrue();
  }
}
