package countersign.client

import countersign.core.ClientResponseOptionType
import countersign.core.DeviceProof
import countersign.core.IdoResponse
import countersign.core.JsonValues
import countersign.core.PushPayload
import countersign.core.WireError
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import org.json.JSONException
import org.json.JSONObject
import java.net.URLEncoder

/**
 * Runs journeys against a Countersign server: start one, then answer each step.
 *
 * ```kotlin
 * val client = OrchestrationClient("https://auth.example.com", "demo-native")
 * var step = client.startJourney("mobile_login")
 * step = client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, answer)
 * if (step.journeyStepId == JourneyStepId.SUCCESS) use(step.token)
 * ```
 *
 * The client keeps the interaction id and the rotating interaction token between calls. A refused answer
 * that repeats the step (`invalid_credentials`) comes back as a response with `error` set; any other
 * refusal throws [CountersignException.Server]. Calls that change the interaction run one at a time.
 */
class OrchestrationClient(
    baseUrl: String,
    val clientId: String,
    private val transport: HttpTransport = HttpUrlConnectionTransport(),
    /** Unix seconds now: the time device proofs carry. */
    private val clock: () -> Long = { System.currentTimeMillis() / 1000 }
) {
    /** The server's URL, without a trailing slash; a path (a balancer's prefix) is kept. */
    val baseUrl: String = baseUrl.trimEnd('/')

    private val lock = Mutex()
    private var interactionId: String? = null
    private var interactionToken: String? = null
    /** The answer whose reply never arrived, with the token it was sent with: [resendLastAnswer] sends it again. */
    private var unanswered: ByteArray? = null

    /** The push registration [setPushToken] recorded, sent with device registration. */
    @Volatile
    var pushRegistration: PushRegistration = PushRegistration.INBOX
        private set

    /** Starts [journeyId]; [additionalParams] become `@policy.request().params`. */
    suspend fun startJourney(
        journeyId: String,
        additionalParams: JSONObject? = null,
        approvalData: Map<String, String>? = null,
        correlationId: String? = null
    ): IdoResponse = lock.withLock {
        val body = JSONObject().put("client_id", clientId)
        additionalParams?.let { body.put("additional_params", it) }
        approvalData?.let { body.put("approval_data", JsonValues.objectOf(it)) }
        correlationId?.let { body.put("correlation_id", it) }
        remember(post("/v1/journeys/${segment(journeyId)}/start", bytes(body), null))
    }

    /** Answers the current step with one of its options. */
    suspend fun submitClientResponse(option: ClientResponseOptionType, data: JSONObject? = null): IdoResponse =
        submitClientResponse(option.wire, data)

    /** Answers the current step with an option id, custom branch ids included. */
    suspend fun submitClientResponse(option: String, data: JSONObject? = null): IdoResponse = lock.withLock {
        val body = JSONObject().put("option", option)
        data?.let { body.put("data", it) }
        submit(bytes(body))
    }

    /**
     * Sends again the answer whose reply never arrived (the network failed after it was sent), with the
     * token it was sent with. When that answer ended the journey (the phone's approval, say), the server
     * answers the same again, for at least 90 seconds. A lost answer that moved the run to another step
     * cannot be had again: start over. Throws [CountersignException.NoActiveInteraction] when every
     * answer sent was answered.
     */
    suspend fun resendLastAnswer(): IdoResponse = lock.withLock {
        submit(unanswered ?: throw CountersignException.NoActiveInteraction())
    }

    /**
     * Starts the mobile approve journey of a push payload, proving with the device key that this is the
     * device the approval was sent to. The payload goes back exactly as received.
     */
    suspend fun startMobileApproveJourney(payload: PushPayload, deviceId: String, authenticator: Authenticator): IdoResponse =
        startMobileApproveJourney(payload.values, deviceId, authenticator)

    /** [startMobileApproveJourney] for a payload as a map of strings (an FCM `RemoteMessage.getData()`). */
    suspend fun startMobileApproveJourney(payload: Map<String, String>, deviceId: String, authenticator: Authenticator): IdoResponse {
        val approvalId = payload["approval_id"] ?: throw CountersignException.NotAnApproval()
        val timestamp = clock()
        val signature = authenticator.signWithDeviceKey(DeviceProof.approveMessage(approvalId, timestamp))
        val body = JSONObject()
            .put("client_id", payload["client_id"] ?: clientId)
            .put("payload", JsonValues.objectOf(payload))
            .put("device_id", deviceId)
            .put("timestamp", timestamp)
            .put("device_signature", signature)
        return lock.withLock { remember(post("/v1/mobile-approve/start", bytes(body), null)) }
    }

    /**
     * The inbox channel: push payloads waiting for this device, holding the request up to [wait] seconds
     * (at most 30) until one arrives. The request is signed with the device key over its path from the
     * server's root (a balancer's prefix in [baseUrl] is not the server's).
     */
    suspend fun pendingApprovals(deviceId: String, authenticator: Authenticator, wait: Int = 0): List<PushPayload> {
        val path = "/v1/devices/${segment(deviceId)}/pending" + if (wait > 0) "?wait=$wait" else ""
        val timestamp = clock()
        val signature = authenticator.signWithDeviceKey(DeviceProof.requestMessage("GET", path, timestamp))
        val headers = mapOf(
            "Accept" to "application/json",
            "Countersign-Device" to deviceId,
            "Countersign-Timestamp" to timestamp.toString(),
            "Countersign-Signature" to signature)
        val response = transport.send(HttpRequest("GET", baseUrl + path, headers, null, (wait + 30) * 1000))
        val json = parse(response.body)
        if (response.status in 200..299 && json != null) PushPayload.listFromInbox(json)?.let { return it }
        throw refusal(json, response)
    }

    /**
     * Records how the server reaches this phone: `fcm` with the FCM registration token and, as [appId], the
     * Firebase project id (which picks the server's FCM configuration); `inbox` with neither. Sent when
     * the device registers.
     */
    fun setPushToken(token: String?, channel: String = "fcm", appId: String? = null) {
        pushRegistration = PushRegistration(channel, token, appId)
    }

    private suspend fun submit(body: ByteArray): IdoResponse {
        val id = interactionId ?: throw CountersignException.NoActiveInteraction()
        val token = interactionToken ?: throw CountersignException.NoActiveInteraction()
        unanswered = body
        val response = post("/v1/interactions/${segment(id)}/submit", body, token)
        unanswered = null
        return remember(response)
    }

    private fun remember(response: IdoResponse): IdoResponse {
        // A reply without a token (a poll of a waiting step, an ended journey) leaves the one held.
        if (response.interactionToken != null || response.interactionId != interactionId) interactionToken = response.interactionToken
        // A new run: an answer lost in the one before is not this run's to send again.
        if (response.interactionId != interactionId) unanswered = null
        interactionId = response.interactionId
        return response
    }

    /**
     * POSTs JSON and reads an `IdoResponse`, whatever the status (a repeated step comes with 400). The
     * reply of a refusal that ends nothing is thrown as [CountersignException.Server]; the client then
     * keeps its token, so a call is sent again as it was.
     */
    private suspend fun post(path: String, body: ByteArray, bearer: String?): IdoResponse {
        val headers = LinkedHashMap<String, String>()
        headers["Content-Type"] = "application/json"
        headers["Accept"] = "application/json"
        bearer?.let { headers["Authorization"] = "Bearer $it" }
        val response = transport.send(HttpRequest("POST", baseUrl + path, headers, body, 60_000))
        val json = parse(response.body)
        json?.let(IdoResponse.Companion::fromJson)?.let { return it }
        // A refusal is an answer too: the call is not to be sent again.
        unanswered = null
        throw refusal(json, response)
    }

    private fun refusal(json: JSONObject?, response: HttpResponse): CountersignException {
        val error = json?.optJSONObject("error")?.let(WireError.Companion::fromJson)
            ?: return CountersignException.UnexpectedResponse(response.status)
        return CountersignException.Server(response.status, error, response.header("Retry-After")?.trim()?.toLongOrNull())
    }

    private fun bytes(json: JSONObject): ByteArray = json.toString().toByteArray(Charsets.UTF_8)

    private fun parse(body: ByteArray): JSONObject? =
        try { JSONObject(String(body, Charsets.UTF_8)) } catch (notJson: JSONException) { null }

    /** A path segment: ids are URL-safe already; anything else is percent-encoded. */
    private fun segment(text: String): String = URLEncoder.encode(text, "UTF-8").replace("+", "%20")
}
