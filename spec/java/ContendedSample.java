import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Exchanger;
import java.util.concurrent.Flow;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The JDK's @Contended classes, alive when the heap is dumped: a
 * ForkJoinPool whose workers have run tasks (ForkJoinPool and its
 * WorkQueues), a SubmissionPublisher with live subscriptions
 * (BufferedSubscription, class- and field-level @Contended), a LongAdder
 * and a ConcurrentHashMap's size updated from many threads at once (their
 * Striped64$Cell and CounterCell) and an Exchanger used by two threads
 * (Exchanger$Node, kept in each thread's participant slot). Prints
 * "ready PID" and waits to be dumped. With the argument "list" it prints
 * instead the classes of this JDK whose class files carry @Contended.
 */
public class ContendedSample {
    static final ForkJoinPool POOL = new ForkJoinPool(4);
    static final SubmissionPublisher<Integer> PUBLISHER = new SubmissionPublisher<>(POOL, 64);
    static final List<Flow.Subscription> SUBSCRIPTIONS = new ArrayList<>();
    static final LongAdder ADDER = new LongAdder();
    static final ConcurrentHashMap<Integer, Integer> MAP = new ConcurrentHashMap<>();
    static final Exchanger<String> EXCHANGER = new Exchanger<>();
    static final List<Thread> PARKED = new ArrayList<>();

    static final class Sum extends RecursiveTask<Long> {
        final int from, to;
        Sum(int from, int to) { this.from = from; this.to = to; }
        protected Long compute() {
            if (to - from < 1000) {
                long s = 0;
                for (int i = from; i < to; i++) s += i;
                return s;
            }
            int mid = (from + to) >>> 1;
            Sum left = new Sum(from, mid);
            left.fork();
            return new Sum(mid, to).compute() + left.join();
        }
    }

    /** A subscriber that takes a few items and then waits: its subscription stays live. */
    static final class Taker implements Flow.Subscriber<Integer> {
        final CountDownLatch got;
        Taker(CountDownLatch got) { this.got = got; }
        public void onSubscribe(Flow.Subscription s) {
            synchronized (SUBSCRIPTIONS) { SUBSCRIPTIONS.add(s); }
            s.request(3);
        }
        public void onNext(Integer item) { got.countDown(); }
        public void onError(Throwable t) { }
        public void onComplete() { }
    }

    /** Starts n threads that all run body at once, and waits for them. */
    static void together(int n, Runnable body) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                try { start.await(); } catch (InterruptedException e) { return; }
                body.run();
            });
            t.start();
            threads.add(t);
        }
        start.countDown();
        for (Thread t : threads) t.join();
    }

    /** Prints the JDK's classes whose class files name the @Contended annotation, one a line. */
    static void listContended() throws Exception {
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        List<String> found = new ArrayList<>();
        try (var paths = Files.walk(jrt.getPath("/modules"))) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                String name = p.toString();
                if (!name.endsWith(".class")) continue;
                String bytes = new String(Files.readAllBytes(p), "ISO-8859-1");
                if (bytes.contains("Ljdk/internal/vm/annotation/Contended;") || bytes.contains("Lsun/misc/Contended;")) {
                    String path = name.substring("/modules/".length(), name.length() - ".class".length());
                    found.add(path.substring(path.indexOf('/') + 1).replace('/', '.'));
                }
            }
        }
        found.sort(null);
        for (String c : found) System.out.println(c);
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("list")) {
            listContended();
            return;
        }
        if (POOL.invoke(new Sum(0, 200_000)) != 19_999_900_000L) throw new AssertionError("sum");

        CountDownLatch got = new CountDownLatch(3 * 3);
        for (int i = 0; i < 3; i++) PUBLISHER.subscribe(new Taker(got));
        for (int i = 0; i < 9; i++) PUBLISHER.submit(i);
        if (!got.await(1, TimeUnit.MINUTES)) throw new AssertionError("items");

        // contention: the adder and the map's size make their cells
        together(8, () -> {
            int mine = (int) Thread.currentThread().getId() << 20;
            for (int i = 0; i < 200_000; i++) {
                ADDER.increment();
                MAP.put(mine + (i & 1023), i);
                MAP.remove(mine + ((i + 512) & 1023));
            }
        });
        if (ADDER.sum() != 8 * 200_000) throw new AssertionError("adder");

        // two threads that exchanged once and stay alive with their Nodes
        CountDownLatch exchanged = new CountDownLatch(2);
        for (String word : new String[] { "ping", "pong" }) {
            Thread t = new Thread(() -> {
                try {
                    EXCHANGER.exchange(word);
                    exchanged.countDown();
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) { }
            });
            t.setDaemon(true);
            t.start();
            PARKED.add(t);
        }
        if (!exchanged.await(1, TimeUnit.MINUTES)) throw new AssertionError("exchange");

        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
