import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/*
 * Planted shapes for the heap pages of sift serve (spec/heap_pages_spec.lua):
 *
 * - HeapPages.planted: a HeapPages$Customer, which extends HeapPages$Person:
 *   fields declared by both classes (Person: name "Ada Lovelace", age 36;
 *   Customer: email "ada@example.org", tier 3, notes byte[] "vip\u0000\u0001",
 *   initials char[] "AL", orders Order[3]).
 * - HeapPages.orders: 250 HeapPages$Order, order i holding a byte[i * 40]
 *   (so their retained sizes differ and sort; three pages of 100).
 * - HeapPages$Shape with two subclasses (Circle, Square) and statics of
 *   several types (int, long, boolean, double, String, Object).
 * - A child-first class loader that defines HeapPages$Order again (so the
 *   loaders page's "loaded twice" table has a row).
 */
public class HeapPages {
    public static class Person {
        final String name;
        final int age;
        Person(String name, int age) { this.name = name; this.age = age; }
    }

    public static class Customer extends Person {
        final String email;
        final int tier;
        final byte[] notes = { 'v', 'i', 'p', 0, 1 };
        final char[] initials = { 'A', 'L' };
        final Order[] orders = new Order[3];
        Customer(String name, int age, String email, int tier) { super(name, age); this.email = email; this.tier = tier; }
    }

    public static class Order {
        final int number;
        final byte[] lines;
        public Order() { this(0); }
        Order(int number) { this.number = number; this.lines = new byte[number * 40]; }
    }

    public static class Shape {
        static int created = 7;
        static long biggest = 1234567890123L;
        static boolean frozen = true;
        static double ratio = 0.5;
        static String label = "shapes";
        static Object registry = new ArrayList<String>(List.of("circle", "square"));
    }
    public static class Circle extends Shape { final double r = 2; }
    public static class Square extends Shape { final double side = 3; }

    static class ChildFirst extends URLClassLoader {
        ChildFirst(URL[] urls) { super("child-first", urls, HeapPages.class.getClassLoader()); }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null && name.equals("HeapPages$Order")) c = findClass(name);
                return c != null ? c : super.loadClass(name, resolve);
            }
        }
    }

    static Customer planted;
    static Order[] orders = new Order[250];
    static Shape[] shapes = { new Circle(), new Square(), new Circle() };
    static ClassLoader loader;
    static Object otherOrder;

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < orders.length; i++) orders[i] = new Order(i + 1);
        planted = new Customer("Ada Lovelace", 36, "ada@example.org", 3);
        for (int i = 0; i < 3; i++) planted.orders[i] = orders[i];
        URL here = HeapPages.class.getProtectionDomain().getCodeSource().getLocation();
        loader = new ChildFirst(new URL[] { here });
        otherOrder = loader.loadClass("HeapPages$Order").getDeclaredConstructor().newInstance();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600_000);
    }
}
