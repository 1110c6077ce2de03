package dev.parapet.proxy.admin;

import java.util.List;

/** What {@code POST /admin/reload} runs: re-read the configuration, validate it, swap it in. */
@FunctionalInterface
public interface Reloader {

  /** Reloads; never throws for a bad configuration (that is a result). */
  Result reload();

  /**
   * @param status the HTTP status to answer: 200 applied, 400 invalid, 409 needs a restart, 500
   *     unreadable
   * @param summary one line for humans and logs
   * @param errors every problem, one per line ({@code FILE:LINE:COL: path: message})
   */
  record Result(int status, String summary, List<String> errors) {
    public Result {
      errors = List.copyOf(errors);
    }
  }
}
