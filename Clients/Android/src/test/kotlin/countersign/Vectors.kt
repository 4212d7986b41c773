package countersign

import countersign.core.JsonValues
import org.json.JSONArray
import org.json.JSONObject

/** The vectors shared with the Swift SDK, from `countersign-vectors.json` on the test class path. */
object Vectors {
    val json: JSONObject by lazy {
        val stream = Vectors::class.java.getResourceAsStream("/countersign-vectors.json")
            ?: throw IllegalStateException("countersign-vectors.json is not on the class path")
        JSONObject(stream.use { String(it.readBytes(), Charsets.UTF_8) })
    }

    /** The objects of the array named [name]. */
    fun list(name: String): List<JSONObject> {
        val array = json.getJSONArray(name)
        return (0 until array.length()).map { array.getJSONObject(it) }
    }

    fun strings(name: String): List<String> {
        val array: JSONArray = json.getJSONArray(name)
        return (0 until array.length()).map { array.getString(it) }
    }

    fun map(json: JSONObject): Map<String, String> = JsonValues.strings(json)

    fun hex(bytes: ByteArray): String = bytes.joinToString("") { String.format("%02x", it.toInt() and 0xff) }
}
