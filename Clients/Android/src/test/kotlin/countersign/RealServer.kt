package countersign

import countersign.client.Authenticator
import countersign.client.HttpRequest
import countersign.client.HttpResponse
import countersign.client.HttpTransport
import countersign.client.HttpUrlConnectionTransport
import countersign.client.OrchestrationClient
import countersign.client.SoftwareKeyStore
import countersign.core.ClientResponseOptionType
import countersign.core.EnrollmentLink
import countersign.core.IdoResponse
import countersign.core.JourneyStepId
import countersign.core.LenientBase64
import countersign.core.PushPayload
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import java.io.IOException
import java.net.HttpURLConnection
import java.net.URL
import java.util.UUID

/**
 * The `countersign serve --dev` that scripts/android-test.sh started: its URL and admin key come in
 * `COUNTERSIGN_TEST_URL` and `COUNTERSIGN_TEST_ADMIN_KEY`.
 */
object RealServer {
    val url: String = System.getenv("COUNTERSIGN_TEST_URL")
        ?: throw IllegalStateException("COUNTERSIGN_TEST_URL is not set: run these tests through scripts/android-test.sh")
    private val adminKey: String = System.getenv("COUNTERSIGN_TEST_ADMIN_KEY")
        ?: throw IllegalStateException("COUNTERSIGN_TEST_ADMIN_KEY is not set: run these tests through scripts/android-test.sh")

    /** A user no other test uses: limits and "not me" locks are per user. */
    fun newUser(): String = "android-${UUID.randomUUID().toString().substring(0, 8)}@example.com"

    /** An admin API call (JSON in and out); throws on a status outside 2xx. */
    fun admin(method: String, path: String, body: JSONObject? = null): JSONObject {
        val connection = URL(url + path).openConnection() as HttpURLConnection
        connection.requestMethod = method
        connection.setRequestProperty("Authorization", "Bearer $adminKey")
        if (body != null) {
            connection.doOutput = true
            connection.setRequestProperty("Content-Type", "application/json")
            connection.outputStream.use { it.write(body.toString().toByteArray()) }
        }
        val status = connection.responseCode
        val text = (if (status >= 400) connection.errorStream else connection.inputStream)?.use { String(it.readBytes()) } ?: ""
        if (status !in 200..299) throw IOException("admin $method $path: $status $text")
        return if (text.isBlank()) JSONObject() else JSONObject(text)
    }

    /** The enrollment link the relying party would show [user] as a QR code. */
    fun enrollmentUri(user: String): String =
        admin("POST", "/admin/v1/enrollment-codes", JSONObject().put("external_user_id", user).put("client_id", "demo-native"))
            .getString("enrollment_uri")

    /** The claims of a JWT, unverified (the server's own tests verify tokens; these read what they say). */
    fun claims(token: String): JSONObject = JSONObject(String(LenientBase64.decode(token.split(".")[1])!!, Charsets.UTF_8))
}

/** A transport over the default one that loses the reply of the next request after the server handled it. */
class LossyTransport : HttpTransport {
    private val real = HttpUrlConnectionTransport()
    @Volatile
    var loseNextReply = false
    val sent = mutableListOf<HttpRequest>()

    override suspend fun send(request: HttpRequest): HttpResponse {
        synchronized(sent) { sent.add(request) }
        val response = real.send(request)
        if (loseNextReply) {
            loseNextReply = false
            throw IOException("the connection dropped before the reply arrived")
        }
        return response
    }
}

/** A phone running the SDK as an app would: software keys in a directory of its own, the default HTTP transport. */
class Phone(
    val transport: HttpTransport = HttpUrlConnectionTransport(),
    clock: () -> Long = { System.currentTimeMillis() / 1000 }
) : java.io.Closeable {
    /** The phone's key file; [KeysOnDisk.aliases] names the keys in it. */
    val keys = KeysOnDisk()
    val client = OrchestrationClient(RealServer.url, "demo-native", transport, clock)
    val authenticator = Authenticator(SoftwareKeyStore(keys.file))
    lateinit var user: String
    lateinit var deviceId: String

    /** Registers with an enrollment code for [user], read from the link the QR code would carry. */
    suspend fun register(user: String): IdoResponse {
        val link = EnrollmentLink.parse(RealServer.enrollmentUri(user))
        assertNotNull(link, "the server's enrollment link is one the SDK reads")
        assertTrue(link!!.isFor(RealServer.url), "the link names this server")
        var step = client.startJourney("mobile_registration")
        assertEquals(JourneyStepId.ENROLLMENT_CODE, step.journeyStepId)
        step = client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, JSONObject().put("enrollment_code", link.code))
        assertEquals(JourneyStepId.MOBILE_BIOMETRICS_REGISTRATION, step.journeyStepId, "$step")
        val userIdentifier = step.dataString("user_identifier")!!
        step = client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, authenticator.registerNativeBiometrics(userIdentifier))
        assertEquals(JourneyStepId.DEVICE_REGISTRATION, step.journeyStepId, "$step")
        step = client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, authenticator.registerDevice(
            step.dataString("challenge")!!, "Test phone", "JVM", client.pushRegistration))
        assertEquals(JourneyStepId.SUCCESS, step.journeyStepId, "$step")
        authenticator.keepRegisteredKeys(userIdentifier)
        this.user = userIdentifier
        deviceId = step.dataString("device_id")!!
        return step
    }

    /** The one approval the inbox holds, waiting up to [wait] seconds for it. */
    suspend fun nextApproval(wait: Int = 20): PushPayload {
        val approvals = client.pendingApprovals(deviceId, authenticator, wait)
        assertEquals(1, approvals.size, "one approval waits: $approvals")
        return approvals.single()
    }

    /** Opens the mobile approve journey of [payload] as this device. */
    suspend fun openApproval(payload: PushPayload): IdoResponse = client.startMobileApproveJourney(payload, deviceId, authenticator)

    /** The answer to a biometric sign-in [step]: its challenge signed with this user's biometric key. */
    suspend fun signIn(step: IdoResponse): JSONObject =
        authenticator.authenticateNativeBiometrics(user, step.dataString("biometrics_challenge")!!)

    override fun close() = keys.close()
}

/** The browser side of a flow, as the web SDK drives it: the public web client. */
class Browser {
    val client = OrchestrationClient(RealServer.url, "demo-web")

    /** Starts [journeyId] for [user] and submits its form (the email, and [fields]); returns the waiting step. */
    suspend fun start(user: String, journeyId: String = "web_login", fields: Map<String, String> = emptyMap()): IdoResponse {
        val step = client.startJourney(journeyId)
        assertNotNull(step.dataString("form_id"), "$step")
        val form = JSONObject().put("email", user)
        fields.forEach { (name, value) -> form.put(name, value) }
        val waiting = client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, form)
        assertEquals(JourneyStepId.MOBILE_APPROVE_AUTHENTICATION, waiting.journeyStepId, "$waiting")
        return waiting
    }

    /** The browser's poll once the phone has answered (the first poll after the answer is never slowed down). */
    suspend fun poll(): IdoResponse = client.submitClientResponse(ClientResponseOptionType.CLIENT_INPUT, JSONObject())
}
