package sample;

import android.database.Cursor;
import android.database.sqlite.SQLiteDatabase;
import java.util.ArrayList;
import java.util.List;

/*
 * Every shape of Cursor handling the lint spec checks: each method's name
 * says what sift lint must report on it (spec/lint_spec.lua lists them).
 */
public class Shapes {
    private final SQLiteDatabase db = new SQLiteDatabase();
    private Cursor kept;

    /* criterion 1: operations outside any try */
    int outsideTry() {
        Cursor c = db.rawQuery("select 1", null);
        int n = c.getCount();
        c.close();
        return n;
    }

    /* criterion 2: a try/catch whose cleanup does not close */
    String tryCatchWithoutClose() {
        Cursor c = db.rawQuery("select name", null);
        try {
            c.moveToFirst();
            return c.getString(0);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /* fine: try/finally closing */
    String tryFinallyClose() {
        Cursor c = db.rawQuery("select name", null);
        try {
            c.moveToFirst();
            return c.getString(0);
        } finally {
            c.close();
        }
    }

    /* fine: try-with-resources */
    int tryWithResources() {
        try (Cursor c = db.query("t", null)) {
            return c.getCount();
        }
    }

    /* fine: ownership passes to the caller */
    Cursor returned() {
        Cursor c = db.query("t", null);
        c.moveToFirst();
        return c;
    }

    /* fine: ownership passes to a field */
    void storedInField() {
        kept = db.query("t", null);
        kept.moveToFirst();
    }

    /* fine: closed in a helper the rule can see */
    int closedInHelper() {
        Cursor c = db.query("t", null);
        try {
            return c.getCount();
        } finally {
            closeQuietly(c);
        }
    }

    static void closeQuietly(Cursor c) {
        if (c != null) c.close();
    }

    /* fine: the operations in an inner try, the close in an outer finally */
    List<String> nestedTry() {
        List<String> out = new ArrayList<>();
        Cursor c = db.rawQuery("select name", null);
        try {
            try {
                while (c.moveToNext()) out.add(c.getString(0));
            } catch (IllegalStateException e) {
                out.clear();
            }
        } finally {
            c.close();
        }
        return out;
    }

    /* criterion 2: closed in a catch only (not when all goes well) */
    int closeInCatchOnly() {
        Cursor c = db.rawQuery("select 1", null);
        try {
            return c.getCount();
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /* fine: a loop inside try/finally */
    int loop() {
        int n = 0;
        Cursor c = db.rawQuery("select name", null);
        try {
            while (c.moveToNext()) n += c.getString(0).length();
        } finally {
            c.close();
        }
        return n;
    }

    /* fine: an early return inside try/finally (javac copies the finally) */
    String earlyReturn(boolean quick) {
        Cursor c = db.rawQuery("select name", null);
        try {
            if (quick) return null;
            c.moveToFirst();
            return c.getString(0);
        } finally {
            c.close();
        }
    }

    /* never closed at all: reported as never closed */
    void neverClosed() {
        db.rawQuery("delete from t", null);
    }

    /* criterion 1 in a loop with no try: each operation */
    int loopOutsideTry() {
        int n = 0;
        Cursor c = db.rawQuery("select name", null);
        while (c.moveToNext()) n++;
        c.close();
        return n;
    }
}
