package leakcanary;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/*
 * Planted leaks for the fleet spec, each watched the way LeakCanary's
 * ObjectWatcher does (a retained KeyedWeakReference), so `sift leaks` finds
 * them in a plain JVM dump. -Dleaks=sessions,listeners,handlers picks which.
 */
class KeyedWeakReference extends WeakReference<Object> {
    static volatile long heapDumpUptimeMillis = 5000;
    final String key;
    final String description;
    final long watchUptimeMillis;
    volatile long retainedUptimeMillis = -1;

    KeyedWeakReference(Object referent, String key, String description, long watchUptimeMillis, ReferenceQueue<Object> queue) {
        super(referent, queue);
        this.key = key;
        this.description = description;
        this.watchUptimeMillis = watchUptimeMillis;
    }
}

public class FleetLeaks {
    static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
    static final Map<String, KeyedWeakReference> WATCHED = new HashMap<>();

    static final class Session { final byte[] buffer = new byte[2048]; }
    static final class Screen { final int[] pixels = new int[512]; }
    static final class Handler { final long[] state = new long[128]; }

    static final Map<String, Session> SESSIONS = new HashMap<>();
    static final List<Screen> LISTENERS = new ArrayList<>();
    static final class Registry {
        static final Registry INSTANCE = new Registry();
        final Handler[] handlers = new Handler[4];
    }

    static void watch(Object o, String what) {
        String key = "key-" + WATCHED.size();
        KeyedWeakReference ref = new KeyedWeakReference(o, key, what, 1000, QUEUE);
        ref.retainedUptimeMillis = 1500;
        WATCHED.put(key, ref);
    }

    public static void main(String[] args) throws Exception {
        String leaks = System.getProperty("leaks", "sessions");
        if (leaks.contains("sessions")) {
            Session s = new Session();
            SESSIONS.put("user-1", s);
            watch(s, "session closed");
        }
        if (leaks.contains("listeners")) {
            Screen s = new Screen();
            LISTENERS.add(s);
            watch(s, "screen gone");
        }
        if (leaks.contains("handlers")) {
            Handler h = new Handler();
            Registry.INSTANCE.handlers[2] = h;
            watch(h, "handler done");
        }
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600000);
    }
}
