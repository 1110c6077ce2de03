package dev.parapet.proxy.config;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Certificates and private keys in PEM files, read with the JDK alone: what {@code parapet
 * validate} checks (readable, a key that belongs to its certificate, dates) and what the TLS
 * contexts are built from, so both see the same bytes the same way.
 *
 * <p>A key must be unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}, what {@code openssl genpkey} and
 * OpenSSL 3's {@code req -newkey} write). A PKCS#1 or SEC1 key ({@code BEGIN RSA PRIVATE KEY},
 * {@code BEGIN EC PRIVATE KEY}) is refused with the command that converts it.
 *
 * <p>Whether a key belongs to a certificate is decided by signing a fixed message with the key and
 * verifying it with the certificate's public key: one test for RSA, EC and EdDSA alike.
 */
public final class PemFiles {
  private static final Pattern PRIVATE_KEY =
      Pattern.compile(
          "-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----([A-Za-z0-9+/=\\s]*)-----END \\1PRIVATE KEY-----");
  private static final byte[] CHALLENGE =
      "parapet: does this key belong to this certificate?".getBytes(StandardCharsets.US_ASCII);

  private PemFiles() {}

  /**
   * The certificates in {@code file}, in order (a chain: the leaf first).
   *
   * @throws IOException when the file cannot be read
   * @throws IllegalArgumentException when it holds no PEM certificate or a malformed one
   */
  public static List<X509Certificate> certificates(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    List<X509Certificate> out = new ArrayList<>();
    try {
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      for (Certificate c : cf.generateCertificates(new ByteArrayInputStream(bytes))) {
        if (c instanceof X509Certificate x) {
          out.add(x);
        }
      }
    } catch (CertificateException e) {
      throw new IllegalArgumentException(
          "holds no readable certificate: " + e.getMessage() + " (expected: PEM certificates)", e);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(
          "holds no certificate (expected: PEM, -----BEGIN CERTIFICATE-----)");
    }
    return out;
  }

  /**
   * The private key in {@code file}.
   *
   * @throws IOException when the file cannot be read
   * @throws IllegalArgumentException when it holds no unencrypted PKCS#8 key
   */
  public static PrivateKey privateKey(Path file) throws IOException {
    String text = Files.readString(file, StandardCharsets.US_ASCII);
    Matcher m = PRIVATE_KEY.matcher(text);
    if (!m.find()) {
      throw new IllegalArgumentException(
          "holds no private key (expected: PEM, -----BEGIN PRIVATE KEY-----)");
    }
    String kind = m.group(1).trim();
    if (!kind.isEmpty()) {
      throw new IllegalArgumentException(
          "holds a "
              + kind
              + " PRIVATE KEY (expected: unencrypted PKCS#8, BEGIN PRIVATE KEY;"
              + (kind.equals("ENCRYPTED")
                  ? " decrypt it with openssl pkcs8 -in KEY -out KEY.pk8)"
                  : " convert it with openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8)"));
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(m.group(2));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("holds a private key that is not valid base64", e);
    }
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // not this algorithm: try the next
      }
    }
    throw new IllegalArgumentException(
        "holds a private key of no known algorithm (expected: RSA, EC or Ed25519 in PKCS#8)");
  }

  /**
   * Whether {@code key} is the private half of {@code certificate}'s public key; false also when
   * they are of different algorithms.
   */
  public static boolean matches(PrivateKey key, X509Certificate certificate) {
    String algorithm = signature(key);
    if (algorithm == null) {
      return true; // nothing this check knows how to sign with: leave it to the handshake
    }
    try {
      Signature sign = Signature.getInstance(algorithm);
      sign.initSign(key);
      sign.update(CHALLENGE);
      byte[] signed = sign.sign();
      Signature verify = Signature.getInstance(algorithm);
      verify.initVerify(certificate.getPublicKey());
      verify.update(CHALLENGE);
      return verify.verify(signed);
    } catch (GeneralSecurityException e) {
      return false; // e.g. an EC key against an RSA certificate
    }
  }

  private static @Nullable String signature(PrivateKey key) {
    return switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "Ed448", "EdDSA" -> key.getAlgorithm();
      default -> null;
    };
  }
}
