--- Heap dumps (HPROF): classes, instances, fields, strings, arrays, roots.
--
--     local sift = require "sift"
--     local heap = assert(sift.open("app.hprof"))
--     local cls = heap:class("com.example.MainActivity")
--     for obj in cls:instances() do print(obj, obj.mDestroyed) end
--
-- The index lives in C (`sift.core.hprof`); this module gives it names:
-- dotted class names (from JVM `java/lang/String` and `[Ljava/lang/Object;`
-- forms), deobfuscation with a ProGuard/R8 mapping, objects whose fields
-- read by name, and Java strings decoded from every JDK and Android layout.
-- @module sift.heap

local shared = require "sift.heap.index"
require "sift.heap.graph"
require "sift.heap.retained"
require "sift.heap.object"
require "sift.heap.bitmaps"

return shared.M
