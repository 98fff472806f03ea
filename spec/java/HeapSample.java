import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/*
 * A program whose heap spec/jvm_spec.lua dumps with `jcmd <pid> GC.heap_dump`
 * and then reads back with sift: every field type, strings in both JDK 9+
 * codings, arrays of every primitive type, nested arrays, shadowed fields.
 */
public class HeapSample {
    static final HeapSample ROOT = new HeapSample();
    static final List<Object> KEEP = new ArrayList<>();
    static int counter = 42;

    static class Base { int shadowed = 1; long inherited = 7L; }

    static class Fields extends Base {
        int shadowed = 2;
        boolean z = true;
        char c = 'Ω';
        float f = 1.5f;
        double d = -2.25;
        byte b = -8;
        short s = -300;
        int i = 123456789;
        long j = -9_000_000_000L;
        Object nothing = null;
        String latin = "plain ascii";
        String wide = "Grüße, 世界 \uD83D\uDE00";
    }

    enum Colour { RED, GREEN }

    final Fields fields = new Fields();
    final int[] ints = {1, -2, 3};
    final long[] longs = {Long.MIN_VALUE, 0, Long.MAX_VALUE};
    final double[] doubles = {0.5, -0.25};
    final boolean[] flags = {true, false, true};
    final char[] chars = "chars".toCharArray();
    final byte[] bytes = {0, 1, -1, 127};
    final short[] shorts = {-1, 2};
    final float[] floats = {2.5f};
    final int[][] grid = {{1, 2}, {3}, {}};
    final String[] words = {"alpha", null, "gamma"};
    final Map<String, Integer> map = new HashMap<>();
    final Colour colour = Colour.GREEN;

    public static void main(String[] args) throws Exception {
        ROOT.map.put("answer", 42);
        for (int k = 0; k < 1000; k++) KEEP.add(new Base());
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(120_000);
    }
}
