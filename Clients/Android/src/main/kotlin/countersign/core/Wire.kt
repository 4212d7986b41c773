package countersign.core

import org.json.JSONArray
import org.json.JSONObject

/** Small helpers over `org.json`, which is Android's own JSON library and runs unchanged on the JVM. */
object JsonValues {
    /** A short name of a JSON value's type, for error messages. */
    fun typeName(value: Any?): String = when (value) {
        null, JSONObject.NULL -> "null"
        is Boolean -> "boolean"
        is Number -> "number"
        is String -> "string"
        is JSONArray -> "array"
        is JSONObject -> "object"
        else -> value.javaClass.simpleName
    }

    /** The member names of [json] (Android's `keys()` is a raw iterator). */
    fun keys(json: JSONObject): List<String> = json.keys().asSequence().map { it as String }.toList()

    /** The string members of [json] (others left out): push payloads and approval data. */
    fun strings(json: JSONObject?): Map<String, String> {
        val result = LinkedHashMap<String, String>()
        if (json == null) return result
        for (key in keys(json)) {
            val value = json.opt(key)
            if (value is String) result[key] = value
        }
        return result
    }

    /** A JSON object of the strings of [values]. */
    fun objectOf(values: Map<String, String>): JSONObject = JSONObject().also { json -> values.forEach { (k, v) -> json.put(k, v) } }

    /** A string member, or null when absent, null or not a string. */
    fun string(json: JSONObject?, key: String): String? = json?.opt(key) as? String
}

/** The kinds of answer a client can give to a step. */
enum class ClientResponseOptionType(val wire: String) {
    CLIENT_INPUT("client_input"),
    CANCEL("cancel"),
    FAILURE("failure"),
    CUSTOM("custom"),
    RESEND("resend");

    companion object {
        fun of(wire: String): ClientResponseOptionType? = values().firstOrNull { it.wire == wire }
    }
}

/** One answer a step accepts. */
data class ClientResponseOption(val type: String, val id: String, val label: String)

/** The wire `error` object: [code] is the stable wire code, [errorCode] its typed form. */
data class WireError(val code: String, val message: String, val data: JSONObject? = null) {
    val errorCode: ErrorCode get() = ErrorCode.of(code)

    companion object {
        fun fromJson(json: JSONObject): WireError? {
            val code = json.opt("code") as? String ?: return null
            return WireError(code, json.opt("message") as? String ?: "", json.optJSONObject("data"))
        }
    }
}

/**
 * The one response shape every client receives from the orchestration API (DESIGN.md §2). [data] is the
 * step's data as sent; [error] is set when the last answer was refused and the step is repeated.
 */
class IdoResponse(
    val interactionId: String,
    /** Bearer secret for the next submit; a new one comes with every response that moves the run. */
    val interactionToken: String?,
    val journeyId: String,
    /** Which step the client answers, e.g. `mobile_biometrics_authentication` or `action:success`. */
    val journeyStepId: String,
    val data: JSONObject?,
    /** The answers the current step accepts, keyed by option id. */
    val clientResponseOptions: Map<String, ClientResponseOption>,
    /** The signed token, on `action:success` only. */
    val token: String?,
    val error: WireError?
) {
    /** A string member of [data]. */
    fun dataString(key: String): String? = JsonValues.string(data, key)

    override fun toString(): String = "IdoResponse($journeyId/$journeyStepId${error?.let { ", error ${it.code}" } ?: ""})"

    companion object {
        /** Reads a response; null when [json] is not one (an error envelope, say). */
        fun fromJson(json: JSONObject): IdoResponse? {
            val interactionId = json.opt("interaction_id") as? String ?: return null
            val journeyId = json.opt("journey_id") as? String ?: return null
            val stepId = json.opt("journey_step_id") as? String ?: return null
            val options = LinkedHashMap<String, ClientResponseOption>()
            json.optJSONObject("client_response_options")?.let { all ->
                for (key in JsonValues.keys(all)) {
                    val option = all.optJSONObject(key) ?: continue
                    options[key] = ClientResponseOption(option.optString("type", key), option.optString("id", key), option.optString("label", ""))
                }
            }
            return IdoResponse(
                interactionId, json.opt("interaction_token") as? String, journeyId, stepId, json.optJSONObject("data"), options,
                json.opt("token") as? String, json.optJSONObject("error")?.let(WireError.Companion::fromJson))
        }
    }
}
