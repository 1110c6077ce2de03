package dev.parapet.proxy.http;

import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;

/** Whether a request has a body, the same for the connection that reads it and the flow. */
public final class RequestBodies {
  private RequestBodies() {}

  /**
   * Whether {@code request} has a body: chunked or with a length above zero, and not one that came
   * whole (a request without a body, as the HTTP/1.1 decoder passes it on: no field to look up).
   */
  public static boolean hasBody(HttpRequest request) {
    return !(request instanceof LastHttpContent)
        && (HttpUtil.isTransferEncodingChunked(request)
            || HttpUtil.getContentLength(request, -1L) > 0);
  }
}
