package dev.parapet.proxy.http1;

import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Date;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The {@link HttpHeaders} methods that follow from a few others, for {@link HeaderList}: the {@code
 * String} forms of the {@code CharSequence} ones, numbers and dates read from a field's text
 * without a string, and {@code short} and added {@code int} values as strings.
 */
abstract class DerivedHttpHeaders extends HttpHeaders {

  /** The first {@code name} field's value as it is (a view for a received one), or null. */
  abstract @Nullable CharSequence first(CharSequence name);

  @Override
  public @Nullable String get(String name) {
    return get((CharSequence) name);
  }

  /** The first {@code name} field as a decimal number within {@code [min, max]}, else null. */
  private @Nullable Long number(CharSequence name, long min, long max) {
    CharSequence v = first(name);
    return v == null ? null : FieldValues.decimal(v, min, max);
  }

  @Override
  public @Nullable Integer getInt(CharSequence name) {
    Long n = number(name, Integer.MIN_VALUE, Integer.MAX_VALUE);
    return n == null ? null : n.intValue();
  }

  @Override
  public int getInt(CharSequence name, int defaultValue) {
    Integer v = getInt(name);
    return v == null ? defaultValue : v;
  }

  @Override
  public @Nullable Short getShort(CharSequence name) {
    Long n = number(name, Short.MIN_VALUE, Short.MAX_VALUE);
    return n == null ? null : n.shortValue();
  }

  @Override
  public short getShort(CharSequence name, short defaultValue) {
    Short v = getShort(name);
    return v == null ? defaultValue : v;
  }

  @Override
  public @Nullable Long getTimeMillis(CharSequence name) {
    CharSequence v = first(name);
    Date d = v == null ? null : DateFormatter.parseHttpDate(v);
    return d == null ? null : d.getTime();
  }

  @Override
  public long getTimeMillis(CharSequence name, long defaultValue) {
    Long v = getTimeMillis(name);
    return v == null ? defaultValue : v;
  }

  @Override
  public List<String> getAll(String name) {
    return getAll((CharSequence) name);
  }

  @Override
  public boolean contains(String name) {
    return contains((CharSequence) name);
  }

  @Override
  public Iterator<Map.Entry<String, String>> iterator() {
    return entries().iterator();
  }

  /** Whether a {@code name} field's whole value is {@code value}: a scan, no lists. */
  @Override
  public boolean contains(String name, String value, boolean ignoreCase) {
    return contains((CharSequence) name, value, ignoreCase);
  }

  @Override
  public HttpHeaders add(String name, Object value) {
    return add((CharSequence) name, value);
  }

  @Override
  public HttpHeaders add(String name, Iterable<?> values) {
    return add((CharSequence) name, values);
  }

  @Override
  public HttpHeaders addInt(CharSequence name, int value) {
    return add(name, Integer.toString(value));
  }

  @Override
  public HttpHeaders addShort(CharSequence name, short value) {
    return add(name, Short.toString(value));
  }

  @Override
  public HttpHeaders set(String name, Object value) {
    return set((CharSequence) name, value);
  }

  @Override
  public HttpHeaders set(String name, Iterable<?> values) {
    return set((CharSequence) name, values);
  }

  @Override
  public HttpHeaders setShort(CharSequence name, short value) {
    return set(name, Short.toString(value));
  }

  @Override
  public HttpHeaders remove(String name) {
    return remove((CharSequence) name);
  }
}
