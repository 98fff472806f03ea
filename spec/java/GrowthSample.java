import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;

/*
 * Heap growth for spec/growth_spec.lua: each time the file DIR/go-N
 * appears, one iteration runs, then DIR/done-N is made. With mode "leak"
 * an iteration keeps 100 more Leaked objects in a static list; with
 * "churn" it makes 10,000 objects, keeps the newest 100 and drops the rest;
 * with "map" it keeps 100 more Leaked objects in a static HashMap under new
 * Integer keys, and asks for 20 time zones not asked for before, which the
 * JDK keeps: sun.util.calendar.ZoneInfoFile caches each ZoneInfo it reads
 * in its static map `zones` (a ConcurrentHashMap) for good. "map" also
 * grows two classes no single path holds: 100 Finalizable objects dropped
 * per step wait for a finalizer thread that never comes back (held only
 * by the finalizer's queue), and one Spread more in each of six lists.
 */
public class GrowthSample {
    static final class Payload { final long value; Payload(long v) { value = v; } }
    // The payload is an array of the program's own class: a long[] count
    // also moves with the JDK's own arrays (the attach machinery's among them).
    static final class Leaked { final Payload[] payload = { new Payload(1) }; final int step; Leaked(int s) { step = s; } }
    static final class Churned { final int n; Churned(int n) { this.n = n; } }
    static final class Spread { final int step; Spread(int s) { step = s; } }
    static final class Shelves {
        final List<Spread> a = new ArrayList<>(), b = new ArrayList<>(), c = new ArrayList<>(),
            d = new ArrayList<>(), e = new ArrayList<>(), f = new ArrayList<>();
    }
    static final class Finalizable {
        static final java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
        // the first one finalized blocks the finalizer thread for good
        @Override @SuppressWarnings("deprecation")
        protected void finalize() throws InterruptedException {
            Object never = new Object();
            blocked.countDown();
            synchronized (never) { never.wait(); }
        }
    }

    static final List<Leaked> LEAKS = new ArrayList<>();
    static List<Churned> recent = new ArrayList<>();
    static final Map<Integer, Leaked> BY_ID = new HashMap<>();
    static final Shelves SHELVES = new Shelves();

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        String mode = args[1];
        List<String> zones = new ArrayList<>();  // zones with a region, never the default one
        for (String id : TimeZone.getAvailableIDs())
            if ((id.startsWith("America/") || id.startsWith("Europe/")) && !id.equals(TimeZone.getDefault().getID()))
                zones.add(id);
        if (mode.equals("map")) {  // the finalizer thread blocked before the first step
            new Finalizable();
            while (Finalizable.blocked.getCount() > 0) { System.gc(); Thread.sleep(5); }
        }
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        for (int step = 1; ; step++) {
            File go = new File(dir, "go-" + step);
            while (!go.exists()) Thread.sleep(5);
            if (mode.equals("leak")) {
                for (int i = 0; i < 100; i++) LEAKS.add(new Leaked(step));
            } else if (mode.equals("map")) {
                for (int i = 0; i < 100; i++) BY_ID.put(step * 1000 + i, new Leaked(step));  // (no small cached Integers)
                for (int i = 0; i < 20; i++) TimeZone.getTimeZone(zones.get((step - 1) * 20 + i));
                for (int i = 0; i < 100; i++) new Finalizable();
                for (List<Spread> shelf : List.of(SHELVES.a, SHELVES.b, SHELVES.c, SHELVES.d, SHELVES.e, SHELVES.f))
                    shelf.add(new Spread(step));
            } else {
                List<Churned> all = new ArrayList<>();
                for (int i = 0; i < 10000; i++) all.add(new Churned(i));
                recent = new ArrayList<>(all.subList(all.size() - 100, all.size()));
            }
            new File(dir, "done-" + step).createNewFile();
        }
    }
}
