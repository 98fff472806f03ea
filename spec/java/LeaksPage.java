package leakcanary;

import java.io.File;
import java.io.FileInputStream;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/*
 * Every section of the leaks page of sift serve, in one JVM dump (taken
 * with -all, so that what no root reaches is still in it):
 * - an application leak: a closed Screen a static list keeps, watched the
 *   way LeakCanary's ObjectWatcher does (a retained KeyedWeakReference);
 * - a watched object that nothing holds any more: only its
 *   KeyedWeakReference refers to it, so the leaks page lists it as
 *   unreachable (it will be collected), not as a leak;
 * - an unclosed resource: a FileInputStream a static field keeps open;
 * - MAT-style suspects: 600 Entry objects of 8 kB under one HashMap (a
 *   class suspect) inside the Cache object that holds it (an object
 *   suspect), far more than a tenth of the reachable heap.
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

public class LeaksPage {
    static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
    static final Map<String, KeyedWeakReference> WATCHED = new HashMap<>();

    static final class Screen { boolean destroyed; final int[] pixels = new int[1024]; }
    static final class Entry { final byte[] data = new byte[8192]; }
    static final class Cache { final Map<Integer, Entry> entries = new HashMap<>(); }

    static final List<Screen> LISTENERS = new ArrayList<>();
    static final Cache CACHE = new Cache();
    static FileInputStream log;

    static void watch(Object o, String what) {
        String key = "key-" + WATCHED.size();
        KeyedWeakReference ref = new KeyedWeakReference(o, key, what, 1000, QUEUE);
        ref.retainedUptimeMillis = 1500;
        WATCHED.put(key, ref);
    }

    public static void main(String[] args) throws Exception {
        Screen leaked = new Screen();
        LISTENERS.add(leaked);
        leaked.destroyed = true;
        watch(leaked, "screen destroyed");
        Screen gone = new Screen();
        gone.destroyed = true;
        watch(gone, "screen destroyed and released");
        gone = null;
        for (int i = 0; i < 600; i++) CACHE.entries.put(i, new Entry());
        File f = File.createTempFile("sift", ".log");
        f.deleteOnExit();
        log = new FileInputStream(f);
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600000);
    }
}
