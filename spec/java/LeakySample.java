import java.util.HashMap;
import java.util.Map;

/*
 * A planted leak for spec/leaks_spec.lua: closed sessions that a static
 * map never forgets. Each Session holds a 4096-byte buffer; its user name
 * is also the map's key, so it is not the session's alone.
 */
public class LeakySample {
    static final class Session {
        boolean closed;
        final byte[] buffer = new byte[4096];
        final String user;
        Session(String user) { this.user = user; }
    }

    static final Map<String, Session> SESSIONS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 2000; i++) {
            Session s = new Session("user-" + i);
            SESSIONS.put(s.user, s);
            s.closed = true;  /* closed, and never removed */
        }
        for (int i = 0; i < 3; i++) {
            Session s = new Session("live-" + i);
            SESSIONS.put(s.user, s);
        }
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(120_000);
    }
}
