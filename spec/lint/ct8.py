"""JDK 8's class signatures as a jar, from a later JDK's ct.sym: FindBugs 3.1
reads no JDK past 8 and needs the JDK's classes on its aux classpath.

ct.sym is a zip whose top folders name the releases an entry is for (one
character each: 7, 8, 9, A for 10 ...); under them an optional module
folder (java.base), then the package path; each .sig file is a class file
with the method bodies left out. Usage: ct8.py CT_SYM OUT_JAR
"""
import os
import sys
import zipfile

src = zipfile.ZipFile(sys.argv[1])
with zipfile.ZipFile(sys.argv[2] + ".tmp", "w", zipfile.ZIP_DEFLATED) as out:
    seen = set()
    for name in src.namelist():
        parts = name.split("/")
        if "8" not in parts[0] or not name.endswith(".sig"):
            continue
        rest = parts[1:]
        if rest and "." in rest[0]:  # a module's folder
            rest = rest[1:]
        entry = "/".join(rest)[:-4] + ".class"
        if entry not in seen:
            seen.add(entry)
            out.writestr(entry, src.read(name))
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
