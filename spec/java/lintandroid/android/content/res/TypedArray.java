package android.content.res;

/* A stub of Android's TypedArray: what spec/lint_android_rules_spec.lua compiles against. */
public class TypedArray {
    public int getInt(int index, int fallback) { return fallback; }
    public void recycle() { }
}
