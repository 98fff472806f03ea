import java.lang.ref.WeakReference;

/*
 * Known structures for spec/graph_spec.lua, dumped with `jcmd <pid>
 * GC.heap_dump -all`: a static array of items, a chain of nodes, an object
 * only weakly reachable, a cycle, an object only a thread's stack holds,
 * and a linked list of a million nodes. Sizes in the spec are worked out
 * by hand from these fields.
 */
public class GraphSample {
    static final class Item {
        final byte[] payload;
        Item(int n) { payload = new byte[n]; }
    }
    static final class Node { Node next; Object value; }
    static final class A { B b; byte[] data = new byte[64]; }
    static final class B { A a; byte[] data = new byte[32]; }
    static final class Link { Link next; }

    static final Item[] CACHE = { new Item(100), new Item(200), new Item(300) };
    static Node CHAIN;
    static WeakReference<Item> WEAK;
    static A CYCLE;
    static Link LONG;

    public static void main(String[] args) throws Exception {
        Node n5 = new Node(); n5.value = new byte[1000];
        Node n4 = new Node(); n4.next = n5;
        Node n3 = new Node(); n3.next = n4;
        Node n2 = new Node(); n2.next = n3;
        CHAIN = new Node(); CHAIN.next = n2;
        WEAK = new WeakReference<>(new Item(500));
        A a = new A(); B b = new B(); a.b = b; b.a = a;
        CYCLE = a;
        Link head = null;
        for (int i = 0; i < 1_000_000; i++) { Link l = new Link(); l.next = head; head = l; }
        LONG = head;
        Thread holder = new Thread(() -> {
            Item local = new Item(700);
            try { Thread.sleep(120_000); } catch (InterruptedException e) { }
            System.out.println(local.payload.length);
        }, "holder-thread");
        holder.setDaemon(true);
        holder.start();
        Thread.sleep(500);  /* let the holder reach its sleep */
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(120_000);
    }
}
