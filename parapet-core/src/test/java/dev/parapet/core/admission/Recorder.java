package dev.parapet.core.admission;

import java.util.ArrayList;
import java.util.List;

/** Listener that writes what it hears as "admitted name@now" or "rejected name REASON@now". */
final class Recorder implements AdmissionListener {
  final List<String> events = new ArrayList<>();
  private final java.util.Map<AdmissionTicket, String> names = new java.util.IdentityHashMap<>();

  AdmissionTicket ticket(String name) {
    AdmissionTicket t = new AdmissionTicket(this);
    names.put(t, name);
    return t;
  }

  String name(AdmissionTicket t) {
    return names.get(t);
  }

  @Override
  public void onAdmitted(AdmissionTicket ticket, long nowNanos) {
    events.add("admitted " + names.get(ticket) + "@" + nowNanos);
  }

  @Override
  public void onRejected(AdmissionTicket ticket, RejectReason reason, long nowNanos) {
    events.add("rejected " + names.get(ticket) + " " + reason + "@" + nowNanos);
  }
}
