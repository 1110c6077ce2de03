-- wrk script: after the run, print latency percentiles beyond wrk's --latency four, one line.
--   wrk -t1 -c50 -d10s -s parapet-bench/bench/percentiles.lua http://127.0.0.1:PORT/api/1k
done = function(summary, latency, requests)
  for _, p in pairs({50, 90, 95, 97, 98, 99, 99.5, 99.9, 99.99}) do
    io.write(string.format("p%s=%.2fms ", p, latency:percentile(p) / 1000))
  end
  io.write(string.format("max=%.2fms\n", latency.max / 1000))
end
