import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/*
 * Fills its heap with about `args[0]` MB of ordinary objects (linked nodes,
 * unique strings, small arrays, hash map entries), then waits to be dumped
 * with `jcmd <pid> GC.heap_dump`. Used by `make bench` (bench/hprof.lua).
 */
public class HeapGen {
    static final List<Object> KEEP = new ArrayList<>();
    static final Map<String, Node> INDEX = new HashMap<>();

    static final class Node {
        Node next;
        Object payload;
        int id;
        long stamp;
        Node(Node next, Object payload, int id) {
            this.next = next; this.payload = payload; this.id = id; this.stamp = id * 31L;
        }
    }

    public static void main(String[] args) throws Exception {
        long target = Long.parseLong(args[0]) << 20;
        Runtime rt = Runtime.getRuntime();
        Node head = null;
        int i = 0;
        while (rt.totalMemory() - rt.freeMemory() < target) {
            for (int k = 0; k < 10_000; k++, i++) {
                String name = "item-" + i;
                head = new Node(head, (i & 3) == 0 ? new int[4] : name, i);
                if ((i & 15) == 0) INDEX.put(name, head);
                if ((i & 1023) == 0) { KEEP.add(head); head = null; }
                if ((i & 7) == 0) KEEP.add(new byte[16]);
            }
        }
        KEEP.add(head);
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600_000);
    }
}
