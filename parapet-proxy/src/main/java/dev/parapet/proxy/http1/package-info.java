/**
 * HTTP/1.1 on the wire, both sides: the request decoder of client connections and the response
 * decoder of origin connections (one strict parser, {@link dev.parapet.proxy.http1.Http1Decoder}),
 * their encoders, and {@link dev.parapet.proxy.http1.HeaderList}, header fields kept as views into
 * the bytes they arrived in. Nothing here knows about routes, breakers or caches.
 */
@NullMarked
package dev.parapet.proxy.http1;

import org.jspecify.annotations.NullMarked;
