package countersign.core

import org.json.JSONObject

/**
 * An approval a push announced (DESIGN.md §2): the FCM data message, an APNs `data`, or an inbox entry
 * alike. String values only, no personal data. [values] is the payload exactly as received: it goes back
 * unchanged to `startMobileApproveJourney`.
 */
class PushPayload private constructor(val values: Map<String, String>) {
    val approvalId: String get() = values.getValue("approval_id")
    /** The native client the approval is for. */
    val clientId: String get() = values.getValue("client_id")
    /** When the approval expires, RFC 3339 as the server wrote it. */
    val expiresAt: String get() = values.getValue("expires_at")
    /** The application's display name, to show the person. */
    val application: String get() = values.getValue("application")

    override fun equals(other: Any?): Boolean = other is PushPayload && other.values == values
    override fun hashCode(): Int = values.hashCode()
    override fun toString(): String = "PushPayload(${values["approval_id"]})"

    companion object {
        private val required = listOf("approval_id", "client_id", "expires_at", "application")

        /**
         * The approval an FCM data message announces: pass `RemoteMessage.getData()` as it arrives in
         * `FirebaseMessagingService.onMessageReceived`. Null for any other message the app receives (one
         * missing a required key, or whose values are empty), so the app can hand those to its own code.
         */
        fun fromFcmData(data: Map<String, String>): PushPayload? {
            if (required.any { data[it].isNullOrEmpty() }) return null
            return PushPayload(LinkedHashMap(data))
        }

        /** An inbox entry or an APNs-style JSON payload: string members only, the required keys present. */
        fun fromJson(json: JSONObject): PushPayload? {
            for (key in JsonValues.keys(json)) if (json.opt(key) !is String) return null
            return fromFcmData(JsonValues.strings(json))
        }

        /** The approvals of an inbox answer `{"approvals": [payload, …]}`, skipping entries that are not one. */
        fun listFromInbox(json: JSONObject): List<PushPayload>? {
            val approvals = json.optJSONArray("approvals") ?: return null
            return (0 until approvals.length()).mapNotNull { approvals.optJSONObject(it)?.let(::fromJson) }
        }
    }
}
