package android.content;

import android.content.res.TypedArray;

/* A stub of Android's Context: obtainStyledAttributes returns a TypedArray to recycle. */
public class Context {
    public TypedArray obtainStyledAttributes(int[] attrs) { return new TypedArray(); }
}
