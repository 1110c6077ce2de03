/**
 * TLS on both sides: the HTTPS listener ({@link dev.parapet.proxy.tls.ServerTls}: one context per
 * certificate, SNI picks one, ALPN picks the protocol in {@link
 * dev.parapet.proxy.tls.AlpnDispatch}), and HTTPS to origin pools ({@link
 * dev.parapet.proxy.tls.OriginTls}), whose handshake failures are connect failures ({@link
 * dev.parapet.proxy.tls.HandshakeFailures}).
 */
@NullMarked
package dev.parapet.proxy.tls;

import org.jspecify.annotations.NullMarked;
