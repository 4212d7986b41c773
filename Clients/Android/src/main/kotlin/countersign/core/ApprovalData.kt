package countersign.core

import org.json.JSONObject

/**
 * Transaction details a person approves on the phone (DESIGN.md §3): a flat object of at most ten string
 * values of at most 128 characters, under non-empty keys of at most 64, using only ASCII letters, digits,
 * spaces and `. , _ -`. That alphabet needs no escaping, so the server and every SDK derive the same
 * canonical bytes from the same details.
 */
class ApprovalData(values: Map<String, String>) {
    /** The details, sorted by key (the order the person is shown them in and the canonical order). */
    val values: Map<String, String> = values.toSortedMap()

    init {
        if (values.size > MAXIMUM_PROPERTIES) {
            throw Violation(null, "at most $MAXIMUM_PROPERTIES properties are allowed, got ${values.size}")
        }
        for ((key, value) in this.values) {
            if (key.length == 0) throw Violation(key, "keys must not be empty")
            if (key.length > MAXIMUM_KEY_LENGTH) {
                throw Violation(key.take(MAXIMUM_KEY_LENGTH) + "…", "key must be at most $MAXIMUM_KEY_LENGTH characters, got ${key.length}")
            }
            if (!usesAllowedCharacters(key)) throw Violation(key, "key may contain only letters, digits, spaces and . , _ -")
            if (value.length > MAXIMUM_VALUE_LENGTH) {
                throw Violation(key, "value must be at most $MAXIMUM_VALUE_LENGTH characters, got ${value.length}")
            }
            if (!usesAllowedCharacters(value)) throw Violation(key, "value may contain only letters, digits, spaces and . , _ -")
        }
    }

    /** Why approval data was refused; the message names the key and the rule. */
    class Violation(val key: String?, val rule: String) :
        IllegalArgumentException(if (key != null) "approval_data key '$key': $rule" else "approval_data: $rule")

    /** The canonical JSON: keys sorted, no whitespace, UTF-8 (the alphabet needs no escaping). */
    val canonicalJson: String
        get() = values.entries.joinToString(",", "{", "}") { "\"${it.key}\":\"${it.value}\"" }

    /** The details as a JSON object. */
    fun toJson(): JSONObject = JsonValues.objectOf(values)

    override fun equals(other: Any?): Boolean = other is ApprovalData && other.values == values
    override fun hashCode(): Int = values.hashCode()
    override fun toString(): String = canonicalJson

    companion object {
        const val MAXIMUM_PROPERTIES = 10
        const val MAXIMUM_VALUE_LENGTH = 128
        const val MAXIMUM_KEY_LENGTH = 64

        /** Validates approval data as it arrives in step data: an object of strings only. */
        fun fromJson(json: Any?): ApprovalData {
            if (json !is JSONObject) throw Violation(null, "must be a JSON object, not ${JsonValues.typeName(json)}")
            val strings = LinkedHashMap<String, String>()
            for (key in JsonValues.keys(json)) {
                val value = json.opt(key)
                if (value !is String) throw Violation(key, "value must be a string, not ${JsonValues.typeName(value)}")
                strings[key] = value
            }
            return ApprovalData(strings)
        }

        private fun usesAllowedCharacters(text: String): Boolean = text.all { char ->
            char in 'a'..'z' || char in 'A'..'Z' || char in '0'..'9' || char == ' ' || char == '.' || char == ',' || char == '_' || char == '-'
        }
    }
}
