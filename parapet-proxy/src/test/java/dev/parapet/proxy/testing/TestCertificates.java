package dev.parapet.proxy.testing;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates made at test time (BouncyCastle's builder, the JDK's EC P-256 keys), so no key is
 * ever committed: a CA, leaves it signs for given names and validity, PEM files of both.
 */
public final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime());

  private TestCertificates() {}

  /** A certificate with its key. */
  public record Issued(X509Certificate certificate, PrivateKey key, List<X509Certificate> chain) {
    /** Writes {@code name}.pem (the chain) and {@code name}-key.pem into {@code dir}. */
    public Files2 write(Path dir, String name) throws IOException {
      Path cert = dir.resolve(name + ".pem");
      Path key = dir.resolve(name + "-key.pem");
      writeCertificates(cert, chain);
      writeKey(key, this.key);
      return new Files2(cert, key);
    }
  }

  /** The two PEM files of an {@link Issued}. */
  public record Files2(Path cert, Path key) {}

  /** A certificate authority that signs leaves. */
  public static final class Ca {
    private final KeyPair keys;
    private final X509Certificate certificate;
    private final String name;

    private Ca(String name) {
      this.name = name;
      this.keys = ecKeys();
      Instant now = Instant.now();
      this.certificate =
          sign(
              keys.getPrivate(),
              name,
              name,
              keys,
              now.minus(Duration.ofDays(1)),
              now.plus(Duration.ofDays(30)),
              true,
              List.of());
    }

    public X509Certificate certificate() {
      return certificate;
    }

    /** A client's TLS context that trusts this CA alone (the JDK's provider). */
    public SSLContext clientContext() throws GeneralSecurityException, IOException {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      trust.setCertificateEntry("ca", certificate);
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    }

    /** Writes the CA certificate (what a {@code ca_file} or {@code curl --cacert} names). */
    public Path write(Path file) throws IOException {
      writeCertificates(file, List.of(certificate));
      return file;
    }

    /** A leaf for {@code names} (DNS; IP literals become IP SANs), valid from yesterday on. */
    public Issued issue(String... names) {
      Instant now = Instant.now();
      return issue(now.minus(Duration.ofDays(1)), now.plus(Duration.ofDays(7)), names);
    }

    /** A leaf for {@code names} valid from {@code notBefore} to {@code notAfter}. */
    public Issued issue(Instant notBefore, Instant notAfter, String... names) {
      KeyPair leaf = ecKeys();
      X509Certificate c =
          sign(keys.getPrivate(), name, names[0], leaf, notBefore, notAfter, false, List.of(names));
      return new Issued(c, leaf.getPrivate(), List.of(c, certificate));
    }
  }

  /** A new CA called {@code name}. */
  public static Ca ca(String name) {
    return new Ca(name);
  }

  /** A fresh EC P-256 key pair. */
  public static KeyPair ecKeys() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void writeCertificates(Path file, List<X509Certificate> certificates)
      throws IOException {
    StringBuilder out = new StringBuilder();
    try {
      for (X509Certificate c : certificates) {
        out.append(pem("CERTIFICATE", c.getEncoded()));
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
    Files.writeString(file, out, StandardCharsets.US_ASCII);
  }

  /** The key as unencrypted PKCS#8 PEM ({@code BEGIN PRIVATE KEY}). */
  public static void writeKey(Path file, PrivateKey key) throws IOException {
    Files.writeString(file, pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private static X509Certificate sign(
      PrivateKey issuerKey,
      String issuer,
      String subject,
      KeyPair subjectKeys,
      Instant notBefore,
      Instant notAfter,
      boolean ca,
      List<String> names) {
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              new X500Name("CN=" + issuer),
              BigInteger.valueOf(SERIAL.incrementAndGet()),
              Date.from(notBefore),
              Date.from(notAfter),
              new X500Name("CN=" + subject),
              subjectKeys.getPublic());
      if (ca) {
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        b.addExtension(
            Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      } else {
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        List<GeneralName> sans = new ArrayList<>();
        for (String n : names) {
          sans.add(
              new GeneralName(
                  Character.isDigit(n.charAt(0)) ? GeneralName.iPAddress : GeneralName.dNSName, n));
        }
        if (!sans.isEmpty()) {
          b.addExtension(
              Extension.subjectAlternativeName,
              false,
              new GeneralNames(sans.toArray(new GeneralName[0])));
        }
      }
      ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey);
      return new JcaX509CertificateConverter().getCertificate(b.build(signer));
    } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
