package dev.parapet.proxy.tls;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * The host names a server certificate answers for, as SNI matches them: its DNS subject alternative
 * names, or — only when it has none — its subject's common name (RFC 6125 §6.4.4). Wildcards
 * ({@code *.example.com}) are kept as written; the SNI mapping matches them one label deep.
 */
public final class CertificateNames {
  private static final int DNS_NAME = 2;

  private CertificateNames() {}

  /** The names of {@code certificate}, lower-cased, in the order it lists them. */
  public static List<String> of(X509Certificate certificate) {
    List<String> names = new ArrayList<>();
    try {
      Collection<List<?>> sans = certificate.getSubjectAlternativeNames();
      if (sans != null) {
        for (List<?> san : sans) {
          if (san.size() >= 2
              && san.get(0) instanceof Integer type
              && type == DNS_NAME
              && san.get(1) instanceof String dns) {
            names.add(dns.toLowerCase(Locale.ROOT));
          }
        }
      }
    } catch (CertificateParsingException e) {
      // an unparsable extension names nothing; the common name below may
    }
    if (!names.isEmpty()) {
      return names;
    }
    try {
      for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN") && rdn.getValue() instanceof String cn) {
          names.add(cn.toLowerCase(Locale.ROOT));
        }
      }
    } catch (InvalidNameException e) {
      // no usable subject: the certificate is reached only as the default
    }
    return names;
  }
}
